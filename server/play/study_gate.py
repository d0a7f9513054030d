"""What study mode adds to /play (server/play/study.py holds the study file and the assignment).

- Enrolment: a participant types the study code (and, when the study names its participants, one of those names)
  and ticks the consent line; the name then becomes that browser's for good (``play_keys``, with the study ID and the
  time of consent). Before that, a name has no list and no attempt in the study.
- Each participant plays their own items in their own order (``Study.assignment``), the next one only: the list
  shows them in order, and an attempt can be started only at the next item (or resumed where one is in progress).
- Every attempt's ``session_start`` carries ``client.study``: the study ID, the consent text's SHA-256 and the time of
  consent, the item's place in the participant's order and the order itself, and the time limit.
- With a time limit, an attempt past it is ended (``abandoned``, reason ``time_limit: ...``) at the next request
  that touches it; the call that came too late is not run. The state then says ``time_up``, and the page says so.
"""

from __future__ import annotations

import time

from agenthop.server.play.keys import KeyStore
from agenthop.server.play.study import Study

TIME_LIMIT_REASON = "time_limit"


def clock() -> float:
    """Now, as the time limit reads it (a test moves it forward rather than wait)."""
    return time.time()


class StudyGate:
    def __init__(self, study: Study, keys: KeyStore, cell_of, error):
        self.study = study
        self.keys = keys
        self.cell_of = cell_of
        self.error = error  # PlayError(status, message), passed in so this module needs nothing of routes.py

    # --- enrolment -------------------------------------------------------------------------------------

    def check_enrolment(self, participant: str, code: object, consent: object) -> None:
        if consent is not True:
            raise self.error(400, "consent: tick the consent line to take part (the study cannot start without it)")
        if not self.study.code_ok(code):
            raise self.error(403, "that is not this study's code: ask the person running the study for it")
        if self.study.participants is not None and participant not in self.study.participants:
            raise self.error(
                403,
                f"{participant} is not one of this study's participants: use the name you were given",
            )

    def enrolled(self, participant: str) -> bool:
        with self.keys.lock:
            return self.keys.study_of(participant) == self.study.id

    def require_enrolled(self, participant: str) -> None:
        if not self.enrolled(participant):
            raise self.error(
                403,
                f"{participant} has not enrolled in study {self.study.id} on this server: enrol with the study code "
                "and consent on the first page, or, if you enrolled in another browser, enter your key",
            )

    # --- assignment ------------------------------------------------------------------------------------

    def position(self, participant: str) -> int:
        if self.study.participants is not None:
            return self.study.participants.index(participant)
        with self.keys.lock:
            order = self.keys.enrolled(self.study.id)
        return order.index(participant) if participant in order else len(order)

    def items_for(self, participant: str) -> list[str]:
        return self.study.assignment(participant, self.position(participant), self.cell_of)

    def client_info(self, participant: str, item_id: str) -> dict:
        """What every attempt's session_start records of the study (client.study)."""
        order = self.items_for(participant)
        with self.keys.lock:
            consented = self.keys.claimed_at(participant)
        return {
            "id": self.study.id,
            "consent_sha256": self.study.consent_sha256,
            "consented_at": consented,
            "position": self.position(participant),
            "slot": order.index(item_id) + 1,
            "order": order,
            "time_limit_s": self.study.time_limit_s,
        }

    # --- time ------------------------------------------------------------------------------------------

    def time_left(self, started: float, now: float | None = None) -> float | None:
        if self.study.time_limit_s is None:
            return None
        return max(0.0, started + self.study.time_limit_s - (clock() if now is None else now))

    def time_up_reason(self) -> str:
        return f"{TIME_LIMIT_REASON}: the study's {self.study.time_limit_s} s for one item ran out"
