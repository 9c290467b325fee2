"""json_top.py FILE KEY... — the value of each top-level KEY of the JSON
object in FILE, printed as JSON, one line per key (null when absent).

A plan of examples/gpt3.yaml (the 175B model) is 100-125 MB of JSON,
which json.load takes 2.5-3.5 s to read; a test that wants only its
totals or memory need not.  A key that occurs exactly once in the text
(as "KEY": ) is the top-level one, and its value is decoded alone from
there; otherwise the whole file is loaded.  (For keys the object has
at its top level: one found once deeper in is taken for it.)
"""
import json
import sys


def top(text, keys):
    whole = None
    values = []
    for key in keys:
        mark = json.dumps(key) + ": "
        if text.count(mark) == 1:
            at = text.index(mark) + len(mark)
            values.append(json.JSONDecoder().raw_decode(text, at)[0])
            continue
        if whole is None:
            whole = json.loads(text)
        values.append(whole.get(key))
    return values


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        text = f.read()
    for v in top(text, sys.argv[2:]):
        print(json.dumps(v))
