import * as z from "zod";
import { type Infer, lazy } from "./lazy.js";
import { listEnvelope, optionalText, requiredText, uuid, blankAsNull } from "./common.js";

export const locationResource = lazy(() =>
  z
    .object({
      id: uuid(),
      object: z.literal("location"),
      name: z.string(),
      short_name: z.string(),
    })
    .meta({ id: "Location" }),
);

export const zoneResource = lazy(() =>
  z
    .object({
      id: uuid(),
      object: z.literal("zone"),
      location_id: uuid(),
      name: z.string(),
      short_name: z.string(),
      description: z.string().nullable(),
    })
    .meta({ id: "Zone" }),
);

export const locationList = lazy(() => listEnvelope(locationResource(), "LocationList"));
export const zoneList = lazy(() => listEnvelope(zoneResource(), "ZoneList"));

export const locationCreateBody = lazy(() =>
  z
    .strictObject({
      name: requiredText(100),
      short_name: requiredText(25),
      address_1: optionalText(100),
      address_2: optionalText(100),
      city: optionalText(100),
      region: optionalText(100),
      country: optionalText(100),
      postal_code: optionalText(20),
      manager: optionalText(255),
      phone: optionalText(255),
      fax: optionalText(255),
      email: blankAsNull(z.email().max(255)),
    })
    .meta({ id: "LocationCreate" }),
);

export const zoneWriteBody = lazy(() =>
  z
    .strictObject({
      name: requiredText(100),
      short_name: requiredText(25),
      description: optionalText(10_000),
    })
    .meta({ id: "ZoneWrite" }),
);

export const locationPath = lazy(() => z.object({ location_id: uuid() }));
export const zonePath = lazy(() => z.object({ location_id: uuid(), zone_id: uuid() }));

export type LocationCreateBody = Infer<typeof locationCreateBody>;
export type ZoneWriteBody = Infer<typeof zoneWriteBody>;
