/* The segment plugin's copy of the Detect head: Segment extends Detect as
 * in Ultralytics, and a plugin links only libyolo, so the one source file
 * plugins/detect/detect_head.c is compiled into this .so as well (its
 * symbols are hidden, so the two plugins never clash). */
#include "../detect/detect_head.c"
