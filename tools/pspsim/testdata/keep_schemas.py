#!/usr/bin/env python3
"""Rewrites stripe-schemas.json from Stripe's published OpenAPI description.

Usage: keep_schemas.py spec3.yaml > stripe-schemas.json, where spec3.yaml is
stripe/openapi's openapi/spec3.yaml at the commit named in "info" (git show
63a6746:openapi/spec3.yaml). Only the schemas in KEEP are kept, verbatim but
for descriptions and x- extensions; a reference to any other schema becomes
any object. "list" is ours (Stripe describes lists inline per path).
"""
import json
import sys

import yaml

COMMIT = "63a674638635c68de26b9f3add13e58198f4df44"
KEEP = [
    "checkout.session", "payment_intent", "charge", "refund", "dispute", "event", "error", "api_errors", "customer",
    # Pix: the session's payment method options, the PaymentIntent's next
    # action (the QR code) and the charge's payment method details.
    "checkout_session_payment_method_options", "checkout_pix_payment_method_options",
    "payment_intent_next_action", "payment_intent_next_action_pix_display_qr_code",
    "payment_method_details", "payment_method_details_pix",
]
LIST = {"description": "list", "properties": {"data": {"type": "array"}, "has_more": {"type": "boolean"},
                                              "object": {"enum": ["list"], "type": "string"}, "url": {"type": "string"}},
        "required": ["object", "data", "has_more", "url"], "type": "object"}


def clean(v):
    if isinstance(v, dict):
        if "$ref" in v:
            name = v["$ref"].rsplit("/", 1)[1]
            if name in KEEP:
                return {"$ref": v["$ref"]}
            return {"description": f"({name}: not kept here; any object)"}
        return {k: clean(x) for k, x in v.items() if k != "description" and not k.startswith("x-")}
    if isinstance(v, list):
        return [clean(x) for x in v]
    return v


def main():
    spec = yaml.safe_load(open(sys.argv[1]))
    schemas = {name: clean(spec["components"]["schemas"][name]) for name in KEEP}
    schemas["list"] = LIST
    version = spec["info"]["version"]
    out = {"components": {"schemas": dict(sorted(schemas.items()))},
           "info": {"description": f"From stripe/openapi openapi/spec3.yaml at commit {COMMIT} (2023-09-12) (info.version {version}): "
                    f"components.schemas {', '.join(KEEP)}, verbatim but for descriptions and x- extensions dropped and references "
                    "to other schemas replaced by any object. 'list' is ours: Stripe describes lists inline per path.",
                    "title": "Stripe's published schemas of the objects pspsim answers with", "version": version},
             "openapi": "3.0.0", "paths": {}}
    json.dump(out, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


main()
