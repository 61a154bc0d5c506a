"""Draw the printable A6 player card, docs/player-card.png (issue 40 item 3), from firmware.player_card.

Every message a player meets on the clock's two 4-digit displays, drawn as the displays draw it
(the simulator's segments) with its one line. A6 portrait at 300 dpi (1240 x 1748 px): print it at
100 % on A6 card, or four to an A4 sheet. The PNG carries the card's digest in a tEXt chunk
("rackside-card"), which tests/test_player_card.py compares with the words of firmware.player_card.

    .venv/bin/python docs/tools/player_card.py [OUT_PNG]
"""

from __future__ import annotations

import os
import struct
import sys
import zlib
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rackside.firmware import player_card  # noqa: E402

W, H = 1240, 1748  # A6 (105 x 148 mm) at 300 dpi
MARGIN = 56
CHUNK_KEY = b"rackside-card"
INK, LIT, UNLIT, RULE = (20, 20, 24), (220, 40, 24), (238, 226, 224), (150, 150, 158)


def text_chunk(png: bytes, key: bytes, value: str) -> bytes:
    """`png` with a tEXt chunk (key, value) after its IHDR."""
    at = 8 + 4 + 4 + 13 + 4  # signature, IHDR's length, type, data, CRC
    data = key + b"\0" + value.encode("latin-1")
    chunk = struct.pack(">I", len(data)) + b"tEXt" + data + struct.pack(">I", zlib.crc32(b"tEXt" + data))
    return png[:at] + chunk + png[at:]


def read_text_chunk(png: bytes, key: bytes) -> str | None:
    """The value of a tEXt chunk named `key`, or None."""
    at = 8
    while at + 8 <= len(png):
        length, kind = struct.unpack(">I4s", png[at:at + 8])
        if kind == b"tEXt":
            k, _, v = png[at + 8:at + 8 + length].partition(b"\0")
            if k == key:
                return v.decode("latin-1")
        at += 12 + length
    return None


def draw(path: Path) -> None:
    import pygame

    from rackside.hardware import sevenseg
    from rackside.hardware.sim_window import segment_polygons

    pygame.display.init()
    pygame.font.init()
    surface = pygame.Surface((W, H))
    surface.fill((255, 255, 255))
    title = pygame.font.Font(None, 76)
    head = pygame.font.Font(None, 46)
    body = pygame.font.Font(None, 31)
    y = MARGIN
    surface.blit(title.render(player_card.TITLE, True, INK), (MARGIN, y))
    surface.blit(body.render("Table ______", True, INK), (W - MARGIN - body.size("Table ______")[0], y + 18))
    y += 74
    digit_w, digit_h, text_x = 36, 40, MARGIN + 4 * 36 + 36
    for section, rows in player_card.CARD:
        y += 8
        surface.blit(head.render(section, True, INK), (MARGIN, y))
        y += 36
        pygame.draw.line(surface, RULE, (MARGIN, y), (W - MARGIN, y), 2)
        y += 8
        for shown, meaning in rows:
            frame = sevenseg.encode(shown)
            x = MARGIN
            for i, bits in enumerate(frame.cells):
                for s, poly in enumerate(segment_polygons(x + 3, y + 2, digit_w - 8, digit_h - 4, 5)):
                    pygame.draw.polygon(surface, LIT if bits >> s & 1 else UNLIT, poly)
                x += digit_w
                if i == sevenseg.COLON_AFTER and frame.colon:
                    pygame.draw.circle(surface, LIT, (x - 2, y + digit_h * 0.33), 4)
                    pygame.draw.circle(surface, LIT, (x - 2, y + digit_h * 0.66), 4)
            if body.size(meaning)[0] > W - MARGIN - text_x:
                raise SystemExit(f"{shown!r}: its line runs off the card: shorten it ({meaning!r})")
            surface.blit(body.render(meaning, True, INK), (text_x, y + 8))  # one line each
            y += digit_h + 5
    end, y = y, H - MARGIN - 30
    if end > y - 14:
        raise SystemExit(f"the card runs over A6 ({end} > {y - 14} px): shorten its lines")
    pygame.draw.line(surface, RULE, (MARGIN, y - 10), (W - MARGIN, y - 10), 2)
    surface.blit(body.render(player_card.FOOTER, True, INK), (MARGIN, y))
    tmp = path.with_suffix(".tmp.png")
    pygame.image.save(surface, str(tmp))
    path.write_bytes(text_chunk(tmp.read_bytes(), CHUNK_KEY, player_card.digest()))
    tmp.unlink()


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "player-card.png"
    draw(out)
    print(f"{out}: {len(player_card.shown())} messages, digest {player_card.digest()}")
