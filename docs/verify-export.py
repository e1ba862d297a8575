#!/usr/bin/env python3
"""Recompute the audit chain of an `invoicing events export`, offline.

EXPORT.jsonl is a complete export (`invoicing events export > EXPORT.jsonl`,
no --from, --type or --account). Each line's chain link is recomputed as
    chain_n = SHA-256(chain_{n-1} || canonical JSON of the event's envelope)
with chain_0 = 32 zero bytes, and compared with the line's "seq" and
"chain". With SEAL.json (from `invoicing audit seal`), the chain at the
seal's "seq" must equal the seal's "chain". Exit 0 when everything agrees,
1 naming the first sequence number that does not, 2 for a usage error.
Signatures are checked by `invoicing audit verify-log`, or any Ed25519 tool.
"""
import argparse
import hashlib
import json
import sys

ENVELOPE = ("data", "id", "metadata", "recorded_at", "revision", "stream", "type")


def canonical(v):
    """RFC 8785 canonical JSON for what events hold: objects, arrays,
    strings, integers, booleans and null."""
    if isinstance(v, dict):
        items = sorted(v.items(), key=lambda kv: kv[0].encode("utf-16-be"))
        return "{" + ",".join(canonical(k) + ":" + canonical(x) for k, x in items) + "}"
    if isinstance(v, list):
        return "[" + ",".join(canonical(x) for x in v) + "]"
    if v is True or v is False:
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    raise ValueError("unexpected value %r (events hold no fractional numbers)" % (v,))


def main(export_path, seal_path=None):
    chain, links = bytes(32), []
    with open(export_path, encoding="utf-8") as export:
        for seq, line in enumerate(export, 1):
            event = json.loads(line)
            envelope = {k: event[k] for k in ENVELOPE}
            chain = hashlib.sha256(chain + canonical(envelope).encode("utf-8")).digest()
            links.append(chain.hex())
            if event.get("seq") is None:
                continue  # not chained yet when exported
            if event["seq"] != seq or event["chain"] != chain.hex():
                print("seq %d (event %s): the recorded chain says %s at seq %s, the log gives %s"
                      % (seq, event["id"], event["chain"], event["seq"], chain.hex()))
                return 1
    if seal_path:
        with open(seal_path, encoding="utf-8") as f:
            seal = json.load(f)
        n = seal["seq"]
        if n > len(links) or links[n - 1] != seal["chain"]:
            print("seq %d: the export does not reach the sealed chain %s" % (n, seal["chain"]))
            return 1
    print("%d events; the chain agrees" % len(links))
    return 0


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="verify-export.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("export", metavar="EXPORT.jsonl",
                        help="a complete export: invoicing events export > EXPORT.jsonl")
    parser.add_argument("seal", metavar="SEAL.json", nargs="?",
                        help="a seal kept from before: invoicing audit seal > SEAL.json")
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = parse_args(sys.argv[1:])
    try:
        sys.exit(main(args.export, args.seal))
    except OSError as err:  # a file that cannot be read is the caller's mistake, not a finding
        print("verify-export.py: %s" % err, file=sys.stderr)
        sys.exit(2)
