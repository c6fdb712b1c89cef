/* Near-match suggestions for misspelt keys, choices, modes and tasks. */
#ifndef YOLO_SUGGEST_H
#define YOLO_SUGGEST_H

/* Optimal-string-alignment edit distance (insert, delete, substitute,
 * swap two neighbours), case-insensitive. */
int yolo_edit_distance(const char *a, const char *b);

/* The candidate nearest to `word`, or NULL if none is near enough to be a
 * plausible misspelling (distance <= max(2, len/3), or `word` is a prefix
 * of exactly one candidate). Ties go to the first candidate. */
const char *yolo_suggest(const char *word, const char *const *candidates, int n);

#endif
