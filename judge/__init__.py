"""The judge core: lexicons, adjudication, the challenge log and the station's lexicon settings,
behind one service layer (`judge.service`) used by the station, by `rackside judge` / `rackside
log`, and by the hall."""
