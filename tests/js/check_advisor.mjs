// Node: the JS advisor (pentadice/faces/web/static/advisor.js) against the Python advisor's answers.
// node check_advisor.mjs DIR LABEL...: DIR holds LABEL.json and its values (the exported tables),
// LABEL.cases.json (advice) and LABEL.legal.json (legal boxes); prints one JSON line per label.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const PentaAdvisor = require(join(here, "../../pentadice/faces/web/static/advisor.js"));
const { checkAdvice, checkLegal } = require(join(here, "compare.js"));

const [dir, ...labels] = process.argv.slice(2);
let failed = false;
for (const label of labels) {
  const meta = JSON.parse(readFileSync(join(dir, label + ".json"), "utf8"));
  const cases = JSON.parse(readFileSync(join(dir, label + ".cases.json"), "utf8"));
  const raw = readFileSync(join(dir, label + ".f64"));
  const buffer = raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength);
  const shaOk = (await PentaAdvisor.sha256Hex(buffer)) === meta.values.sha256;
  const tables = new PentaAdvisor.Tables(meta, buffer);
  const advice = checkAdvice(tables, cases);
  const legal = checkLegal(tables, JSON.parse(readFileSync(join(dir, label + ".legal.json"), "utf8")));
  failed ||= advice.mismatches > 0 || legal.mismatches > 0 || !shaOk;
  console.log(JSON.stringify({ label, sha_ok: shaOk, advice, legal }));
}
process.exit(failed ? 1 : 0);
