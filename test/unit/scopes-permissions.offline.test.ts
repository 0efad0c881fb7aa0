import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PERMISSIONS, PERMISSION_DESCRIPTIONS, SCOPES, SCOPE_DESCRIPTIONS, USER_SETTING_DESCRIPTIONS } from "../../lib/auth/permissions.js";
import { RECORD_READ_SCOPES } from "../../lib/domain/tasks/rules.js";
import { ROUTES } from "../../lib/routes/index.js";

/**
 * The scope and permission descriptions have ONE source (lib/auth/permissions.ts, also what
 * `npm run admin -- scopes` and `-- permissions` print): the README tables must say exactly
 * the same, in the same order, and every scope must be one the API checks.
 */
const README = readFileSync(join(import.meta.dirname, "..", "..", "README.md"), "utf8");

/** The `| \`name\` | description |` rows of the README table under the header row `header`. */
function readmeTable(header: string): [string, string][] {
  const lines = README.split("\n");
  const start = lines.indexOf(header);
  expect(start, `README.md has no table headed ${header}`).toBeGreaterThan(-1);
  expect(lines[start + 1]).toBe("|---|---|");
  const rows: [string, string][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    const match = /^\| `([^`]+)` \| (.*) \|$/.exec(line);
    expect(match, `malformed row: ${line}`).not.toBeNull();
    rows.push([match![1]!, match![2]!]);
  }
  return rows;
}

/** The table as it belongs in README.md (printed on failure, ready to paste). */
const markdown = (header: string, rows: [string, string][]) => [header, "|---|---|", ...rows.map(([name, text]) => `| \`${name}\` | ${text} |`)].join("\n");

const TABLES: [string, [string, string][]][] = [
  ["| scope | what it lets a key do |", SCOPES.map((name) => [name, SCOPE_DESCRIPTIONS[name]])],
  ["| permission | what it grants |", PERMISSIONS.map((name) => [name, PERMISSION_DESCRIPTIONS[name]])],
  ["| user setting | what it does |", Object.entries(USER_SETTING_DESCRIPTIONS)],
];

describe("scopes and permissions", () => {
  it.each(TABLES)("README.md's table %s is the description map, row for row", (header, rows) => {
    expect(readmeTable(header), `README.md should hold:\n${markdown(header, rows)}`).toEqual(rows);
  });

  it("describes in one line of text, without a table-breaking |, every scope and permission", () => {
    for (const [, rows] of TABLES) {
      for (const [name, text] of rows) {
        expect(text, name).toMatch(/^[^|\n]+\.$/);
      }
    }
  });

  it("lists exactly the scopes the API checks: the route table's, plus the read scopes of task links and sync", () => {
    const checked = new Set<string>([...ROUTES.flatMap((route) => route.scopes ?? []), ...Object.values(RECORD_READ_SCOPES)]);
    expect([...checked].sort()).toEqual([...SCOPES].sort());
  });
});
