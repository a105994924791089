// The JavaScript peers of the side-by-side benchmark (run.py): Ajv 8 (draft 2020-12, allErrors,
// on JSON.parse, compiled from the exported input schemas) and Zod 4 (schemas written by hand to
// match them), plain and through z.compile().
//
//     node peers.mjs contract|unions EXPORT_FILE BUDGET_MS
//
// prints one JSON line {"impl", "tool", "payload", "ns_median", "accepted"} per way and payload,
// timed as peers_rust does: the median, over batches, of the time per call within a batch.

import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import * as z from "zod";

const [group, exportFile, budgetMs] = process.argv.slice(2);
const exported = JSON.parse(readFileSync(exportFile, "utf8"));

const currency = z.enum(["USD", "EUR", "GBP"]);
const u8 = (max) => z.number().int().min(0).max(max);
const u32 = z.number().int().min(0).max(4294967295);

const zodSchemas = {
  invoice: z.strictObject({
    customerId: z.string().min(1),
    amount: z.number().gt(0),
    currency,
  }),
  flights: z.strictObject({
    origin: z.string().regex(/^[A-Z]{3}$/),
    destination: z.string().regex(/^[A-Z]{3}$/),
    departureDate: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
    returnDate: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).nullish(),
    passengers: z
      .array(
        z.strictObject({
          age: u8(120),
          needsSeat: z.boolean().optional(),
          checkedBags: u8(4).optional(),
        }),
      )
      .min(1)
      .max(9),
    cabin: z.enum(["economy", "premium_economy", "business", "first"]),
    maxStops: u8(3).nullish(),
    maxPrice: z
      .strictObject({ amount: z.number().gt(0).max(1000000), currency })
      .nullish(),
    preferredAirlines: z.array(z.string()).max(5).optional(),
    refundableOnly: z.boolean().optional(),
    departureWindow: z
      .strictObject({ earliest_hour: u8(23), latest_hour: u8(23) })
      .nullish(),
    limit: z.number().int().min(1).max(50),
    tags: z.record(z.string(), z.string()).optional(),
  }),
  edit_file: z.strictObject({
    path: z.string(),
    ops: z.array(
      z.discriminatedUnion("type", [
        z.strictObject({ type: z.literal("Insert"), line: u32, text: z.string() }),
        z.strictObject({ type: z.literal("Delete"), line: u32, count: u32.nullish() }),
        z.strictObject({ type: z.literal("Replace"), line: u32, text: z.string() }),
        z.strictObject({ type: z.literal("Clear") }),
      ]),
    ),
  }),
};

// The exported schema with `discriminator: {propertyName: "type"}` beside every `oneOf` whose
// branches all fix `type` with a `const`, which Ajv's `discriminator` option then uses to pick
// the branch instead of trying each one.
function withDiscriminator(schema) {
  if (Array.isArray(schema)) return schema.map(withDiscriminator);
  if (schema === null || typeof schema !== "object") return schema;
  const out = {};
  for (const [key, value] of Object.entries(schema)) out[key] = withDiscriminator(value);
  if (
    Array.isArray(out.oneOf) &&
    out.oneOf.every((branch) => branch?.properties?.type?.const !== undefined)
  ) {
    out.discriminator = { propertyName: "type" };
  }
  return out;
}

function ajvValidator(schema, discriminator) {
  const ajv = new Ajv2020({ allErrors: true, discriminator, strict: false });
  addFormats(ajv);
  return ajv.compile(discriminator ? withDiscriminator(schema) : schema);
}

function medianNs(way, budget, batchTime) {
  const clock = process.hrtime.bigint;
  let sink = 0;
  const warmUp = clock();
  let calls = 0;
  while (Number(clock() - warmUp) < budget / 10 || calls < 3) {
    sink += way() ? 1 : 0;
    calls += 1;
  }
  const perCall = Number(clock() - warmUp) / calls;
  const batch = Math.max(1, Math.floor(batchTime / perCall));
  const samples = [];
  const started = clock();
  while (samples.length < 7 || (Number(clock() - started) < budget && samples.length < 200)) {
    const t = clock();
    for (let i = 0; i < batch; i++) sink += way() ? 1 : 0;
    samples.push(Number(clock() - t) / batch);
  }
  samples.sort((a, b) => a - b);
  if (sink < 0) console.error(sink);
  return samples[Math.floor(samples.length / 2)];
}

function line(impl, tool, payload, ns, accepted) {
  console.log(JSON.stringify({ impl, tool, payload, ns_median: ns, accepted }));
}

const budget = Number(budgetMs) * 1e6;
const batchTime = 2e6;
for (const { tool, payload, text } of exported.payloads) {
  if ((tool === "edit_file") !== (group === "unions")) continue;
  const schema = exported.schemas[tool];
  const ways = {};
  const ajv = ajvValidator(schema, false);
  // `validate.errors` holds every violation with its message once `validate` returns.
  ways.ajv = () => ajv(JSON.parse(text));
  if (group === "unions") {
    const discriminated = ajvValidator(schema, true);
    ways.ajv_discriminator = () => discriminated(JSON.parse(text));
  }
  const plain = zodSchemas[tool];
  ways.zod = () => plain.safeParse(JSON.parse(text)).success;
  let compiled;
  try {
    compiled = z.compile(plain, { strict: true });
  } catch (error) {
    console.error(`z.compile refused ${tool}: ${error.message}; measured plain only`);
  }
  if (compiled) ways.zod_compiled = () => compiled.safeParse(JSON.parse(text)).success;
  for (const [impl, way] of Object.entries(ways)) {
    const accepted = way();
    line(impl, tool, payload, medianNs(way, budget, batchTime), accepted);
  }
}
