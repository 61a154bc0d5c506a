# a comment line
  # an indented comment line
Adams, Ann             1500 2; 400; board 1 # seat by the door; p12 2
Baker, Bob             1400 1; 420; board 1; p12 1
