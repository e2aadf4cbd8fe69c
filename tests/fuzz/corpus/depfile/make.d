build/obj/a.o: src/a.c src/a.h \
  /usr/include/stdio.h inc/with\ space.h \
  $$dollar.h

src/a.h:
