"""A director's `new_game` never wipes a game that is running (docs/hall.md: refused while the game
is running or late: "neutralise or end it first").

The refusal was made only on paho's thread (hall.device.clock_output), from the phase of the last frame
the clock drew. A start pressed in the moments before the command is handled (in the runner's
queue, or in the same batch) is not in that frame yet, so the command passed the check and the
runner, which did not check, replaced the running game with a fresh one. The runner now refuses
it on its own thread, against the clock as it is when the request is handled."""

from __future__ import annotations

from rackside.game.clock import NS_PER_S, Phase
from rackside.game.messages import Request


def test_a_new_game_request_reaching_a_running_clock_is_refused(rig):
    t_start = rig.after_ms(10).tap("right")  # the game starts: player 1's time runs
    assert rig.view().phase is Phase.RUNNING
    answers: list = []
    rig.at(t_start + 2 * NS_PER_S)
    rig.runner.submit(Request(rig.now, "new_game", {"game_time_ms": 25 * 60_000}, source="hall",
                              reply=lambda ok, why: answers.append((ok, why))))
    rig.pump()
    assert answers and answers[0][0] is False, answers
    assert "running" in answers[0][1]
    assert rig.view().phase is Phase.RUNNING  # the game goes on, its time untouched
    assert rig.view().players[0].remaining_ns < rig.runner.rules.game_time_ms * 1_000_000
