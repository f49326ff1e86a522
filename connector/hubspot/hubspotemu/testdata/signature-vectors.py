"""Writes signature-vectors.json: HubSpot request signatures (v1, v2, v3)
computed by HubSpot's own Python client library (hubspot-api-python,
hubspot/utils/signature.py, Signature.get_signature), for the Go tests
of hubspotemu and the hubspot connector.

    python3 signature-vectors.py /path/to/hubspot-api-python > signature-vectors.json

Only signature.py is loaded (with its two exception classes stubbed), so
the library's dependencies need not be installed.
"""
import importlib.util
import json
import sys
import types

lib = sys.argv[1]
exc = types.ModuleType("hubspot.exceptions")
exc.InvalidSignatureVersionError = type("InvalidSignatureVersionError", (Exception,), {})
exc.InvalidSignatureTimestampError = type("InvalidSignatureTimestampError", (Exception,), {})
sys.modules["hubspot"] = types.ModuleType("hubspot")
sys.modules["hubspot.exceptions"] = exc
spec = importlib.util.spec_from_file_location("signature", lib + "/hubspot/utils/signature.py")
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
Signature = mod.Signature

SECRET = "yyyyyyyy-yyyy-yyyy-yyyy-yyyyyyyyyyyy"
EVENTS = ('[{"eventId":1,"subscriptionId":12345,"portalId":62515,"occurredAt":1564113600000,'
          '"subscriptionType":"contact.creation","attemptNumber":0,"objectId":123,'
          '"changeSource":"CRM","changeFlag":"NEW","appId":54321}]')
TS = "1693657560000"

# name, version, method, the target URL as entered in HubSpot (what the
# request carries), the URI the library signs (the target with the
# characters of the "Validating requests" table decoded), body.
cases = [
    ("v1 documented example", "v1", "POST", "", "", EVENTS),
    ("v2 documented GET example", "v2", "GET", "https://www.example.com/webhook_uri", "https://www.example.com/webhook_uri", ""),
    ("v2 documented POST example", "v2", "POST", "https://www.example.com/webhook_uri", "https://www.example.com/webhook_uri", '{"example_field":"example_value"}'),
    ("v3 library test", "v3", "POST", "https://www.example.com/webhook_uri", "https://www.example.com/webhook_uri", "{'example_field':'example_value'}"),
    ("v3 query string", "v3", "POST", "https://syncd.example.com/webhooks/connectors/hs?key=k1&tenant=acme",
     "https://syncd.example.com/webhooks/connectors/hs?key=k1&tenant=acme", EVENTS),
    ("v3 decoded characters", "v3", "POST",
     "https://syncd.example.com/webhooks/connectors/hs%3Aprod?to=ops%40example.com&tag=%28a%29%2A%2C%3B%21%24%27&next=%2Fx%3Fy",
     "https://syncd.example.com/webhooks/connectors/hs:prod?to=ops@example.com&tag=(a)*,;!$'&next=/x?y", EVENTS),
]
out = []
for name, version, method, target, signed, body in cases:
    sig = Signature.get_signature(SECRET, body, version, signed or None, method, TS if version == "v3" else None)
    out.append({"name": name, "version": version, "method": method, "target": target, "signedURI": signed,
                "body": body, "timestamp": TS if version == "v3" else "", "secret": SECRET, "signature": sig})
json.dump({"library": "github.com/HubSpot/hubspot-api-python hubspot/utils/signature.py", "commit": sys.argv[2] if len(sys.argv) > 2 else "",
           "vectors": out}, sys.stdout, indent=1)
print()
