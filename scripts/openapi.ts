// `npm run openapi [-- --out FILE]`: writes the OpenAPI document the Worker serves at /api/v1/openapi.json, without
// a server (the app's routes import nothing that needs workerd), for `redocly lint` and client generation.
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { openApiDocument } from "../src/app";

const { values } = parseArgs({ options: { out: { type: "string", default: "openapi.json" } } });
writeFileSync(values.out!, `${JSON.stringify(await openApiDocument(), null, 2)}\n`);
console.log(`wrote ${values.out}`);
