/**
 * Stands in for the `jsonschema` package in Lambda bundles (infra/bundling.ts aliases it).
 *
 * ElectroDB validates every entity model against its JSON schema each time a process starts
 * (twice per model, plus once per entity when the Service is built): a third of a handler's
 * cold start. The models are static and the test suite builds every one of them with the real
 * validator (tests run unbundled), so the bundles skip it. ElectroDB also calls the validator
 * to tell a model from an Entity instance when a Service is built: an object carrying
 * ElectroDB's `_instance` marker is reported as "not a model", everything else as valid.
 */
class Validator {
  addSchema() {}
  validate(instance) {
    const isInstance = instance !== null && typeof instance === "object" && instance._instance !== undefined;
    return { errors: isInstance ? [{ property: "instance", message: "is an ElectroDB instance, not a model", argument: "" }] : [] };
  }
}
Validator.prototype.customFormats = {};
module.exports = { Validator };
