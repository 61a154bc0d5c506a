Adams, Ann             1500 2 3; 400; p12 1 1
Baker, Bob             1400 1 4; 420; p12 2 1
Cole, Cy               1300 4 1; 390; board 2 1; p12 1 2
Dunn, Di               1200 3 2; 380; p12 2 2
