// Checks request signatures with HubSpot's official Node.js client
// (npm @hubspot/api-client, Signature): reads the deliveries hubspotemu
// sent (HS_DELIVERIES, a JSON file), validates their v3 and v1
// signatures with Signature.isValid, and signs fresh requests with
// Signature.getSignature for the Go test to verify. Prints JSON.
const fs = require("fs");
const { Signature } = require("@hubspot/api-client");

const input = JSON.parse(fs.readFileSync(process.env.HS_DELIVERIES, "utf8"));
const out = { checked: [], signed: [] };
for (const d of input.deliveries) {
  const v3 = Signature.isValid({
    signatureVersion: "v3", signature: d.v3, clientSecret: input.secret, requestBody: d.body,
    url: input.target, method: "POST", timestamp: Number(d.timestamp),
  });
  const v1 = Signature.isValid({ signatureVersion: "v1", signature: d.v1, clientSecret: input.secret, requestBody: d.body });
  out.checked.push({ v3, v1 });
}
for (const body of input.toSign) {
  const timestamp = Date.now();
  const signature = Signature.getSignature("POST", "v3", { clientSecret: input.secret, requestBody: body, url: input.target, timestamp });
  out.signed.push({ body, timestamp: String(timestamp), signature });
}
process.stdout.write(JSON.stringify(out));
