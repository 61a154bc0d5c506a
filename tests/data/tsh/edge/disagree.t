Adams, Ann             1500 2 3 9; ; board 1 1 1
Baker, Bob             1400 1 5 0; ; board 1 1 0
this line is not a player
Cole, Cy               1300 5 5 5; ; board 2 2 2
Dunn, Di               1200 4 4 4; ; board 3 2 2
