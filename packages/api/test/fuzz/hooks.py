"""Checks of our own for the schemathesis run in rest-fuzz.test.ts (issue 8, #16).

No response body, whatever the status, may carry a stack trace, SQL, or a driver's message:
input errors name the field, and internal errors carry only a reference (see http-guards.ts).
"""
import re

import schemathesis

LEAKS = re.compile(
    r"(prisma|postgres|PrismaClient|invalid byte sequence|node_modules|\bat [\w$.<>]+ \(|"
    r"\bSELECT\b.+\bFROM\b|\bINSERT INTO\b|\bUPDATE\b.+\bSET\b|syntax error at or near|"
    r"Traceback|TypeError:|ReferenceError:|Cannot read properties of)",
    re.IGNORECASE | re.DOTALL,
)


@schemathesis.check
def no_internals_in_body(ctx, response, case):
    text = response.text or ""
    found = LEAKS.search(text)
    if found:
        raise AssertionError(f"the body reveals server internals: {found.group(0)!r} in {text[:300]!r}")
