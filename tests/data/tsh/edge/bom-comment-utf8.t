# event: BOM test, saved by a Windows editor
König, Jürgen      1500 2 3; 400; board 1 2; p12 1 2
Sánchez, Ana         1400 1 0; 380 50; board 1; p12 2 0

O´Brien, Sean           1300 0 1; 50; p12 0 1; board 0 2
