/* Edit distance and nearest-match suggestions (see cfg/suggest.h). */
#include "cfg/suggest.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SUGGEST_MAX_LEN 64

int yolo_edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > SUGGEST_MAX_LEN) la = SUGGEST_MAX_LEN;
    if (lb > SUGGEST_MAX_LEN) lb = SUGGEST_MAX_LEN;
    int d[SUGGEST_MAX_LEN + 1][SUGGEST_MAX_LEN + 1];
    for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            int cost = ca != cb;
            int best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best) best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) && tolower((unsigned char)a[i - 2]) == cb &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb];
}

const char *yolo_suggest(const char *word, const char *const *candidates, int n) {
    if (word == NULL || word[0] == '\0') return NULL;
    size_t len = strlen(word);
    int limit = (int)(len / 3) > 2 ? (int)(len / 3) : 2;
    const char *best = NULL;
    int best_distance = limit + 1;
    const char *prefix_match = NULL;
    int prefix_matches = 0;
    for (int i = 0; i < n; i++) {
        if (candidates[i] == NULL) continue;
        int distance = yolo_edit_distance(word, candidates[i]);
        if (distance < best_distance) {
            best = candidates[i];
            best_distance = distance;
        }
        if (len >= 3 && strncasecmp(candidates[i], word, len) == 0) {
            prefix_match = candidates[i];
            prefix_matches++;
        }
    }
    if (best == NULL && prefix_matches == 1) best = prefix_match;
    return best;
}
