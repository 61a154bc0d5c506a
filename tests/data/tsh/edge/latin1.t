Müller, Jürgen        1600 2; 410; board 1; p12 1
Núñez, María           1550 1; 390; board 1; p12 2
