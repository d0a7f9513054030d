"""Why a paper cites a work, read from the citing sentence by a fixed rule: method, result or background.

The three intents are SciCite's (Cohan et al., 2019): *method* (the citing paper uses the cited work's method, tool,
data or setting), *result* (it compares its results with the cited work's), *background* (anything else the cited
work is mentioned for). The rule, in order, on the sentence lower-cased:

1. *result* if it compares: "outperform", "compared to/with", "in comparison", "better/worse than", "improve(s/d)
   over/on/upon", "on par with", "comparable to", "consistent with", "in line with", "similar to … result(s)",
   "state-of-the-art result(s)", "surpass", "beat".
2. *method* if it uses: "we use/used/adopt/follow/apply/employ/implement/build on/extend", "following …", "as in",
   "using", "based on", "implemented in/with", "trained with", "initiali[sz]ed with", "toolkit", "pre-trained",
   "we re-implement", "(the) code (of)", "dataset(s) of/from", "corpus from".
3. *background* otherwise.

No sentence (the citation's place in the text is unknown): no intent. The rule is a keyword rule: it reads what the
sentence says, not what the authors meant, and a sentence that cites several works gives each the same intent.
"""

from __future__ import annotations

import re

INTENTS = ("background", "method", "result")

_RESULT = re.compile(
    r"\b(outperform\w*|compared (to|with)|in comparison|(better|worse|higher|lower) than|improv\w* (over|on|upon)|"
    r"on par with|comparable (to|with)|consistent with|in line with|similar to .{0,40}\bresults?\b|"
    r"state[- ]of[- ]the[- ]art (results?|performance)|surpass\w*|beat\w*)\b"
)
_METHOD = re.compile(
    r"\b(we (use|used|adopt\w*|follow\w*|apply|applied|employ\w*|implement\w*|build on|built on|extend\w*|"
    r"re-?implement\w*)|following|as in|using|based on|implemented (in|with)|trained with|initiali[sz]ed (with|by|from)|"
    r"toolkit|pre-?trained|the code (of|from)|datasets? (of|from)|corpus from)\b"
)


def intent_of(sentence: str | None) -> str | None:
    """'result', 'method' or 'background' for a citing sentence by the rule above; None without a sentence."""
    if not sentence:
        return None
    text = sentence.lower()
    if _RESULT.search(text):
        return "result"
    if _METHOD.search(text):
        return "method"
    return "background"
