# A hand-made TSH division for the console's tests: 6 players, 2 rounds played, round 3 paired.
Brown, Ann 1500 2 3 4; 420 390; board 1 2 1; p12 1 2 1;
Castro, Bola 1400 1 4 5; 380 401; board 1 1 2; p12 2 1 2;
Dubois, Chen 1300 4 1 6; 350 377; board 2 2 3; p12 1 1 1;
Evans, Dara 1200 3 2 1; 399 360; board 2 1 1; p12 2 2 2;
Fofana, Eli 1100 6 6 2; 410 322; board 3 3 2; p12 1 2 1;
Gupta, Femi 1000 5 5 3; 300 415; board 3 3 3; p12 2 1 2
this line has no rating
