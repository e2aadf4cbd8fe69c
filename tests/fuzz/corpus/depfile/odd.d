k.o: k.c dÿir/x.h C:\\win\\path.h #hash.h
