newt={"config":{"event_name":"Test Open"},"divisions":[{"name":"b","players":[null,
{"id":1,"name":"Hughes, Gita","rating":1800,"scores":[400],"pairings":[2,3],"etc":{"board":[5,6],"p12":[2,1]}},
{"id":2,"name":"Ito, Hugo","rating":1700,"scores":[350],"pairings":[1,4],"etc":{"board":[5,7],"p12":[1,2]}},
{"id":3,"name":"Jansen, Ines","rating":1600,"scores":[380],"pairings":[4,1],"etc":{"board":[6,6],"p12":[1,2]}},
{"id":4,"name":"Kaur, Jude","rating":1500,"scores":[390],"pairings":[3,2],"etc":{"board":[6,7],"p12":[2,1]}}]}]};
