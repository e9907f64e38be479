/* A profile's labels as JSON (labels.h). */
#include "labels.h"

#include <cjson/cJSON.h>

/* What one label's prior moves: each dimension by name, its family and which way. */
static cJSON *moves_of(const tforge_forge *forge, const tforge_forge_label *l,
                       const tforge_space *space)
{
    cJSON *moves = cJSON_CreateArray();
    for (size_t m = 0; moves && m < l->n_moves; m++) {
        cJSON *move = cJSON_CreateObject();
        cJSON_AddStringToObject(move, "dimension", tforge_space_name(space, l->moves[m].dim));
        cJSON_AddStringToObject(move, "family", tforge_forge_family(forge, l->moves[m].dim));
        cJSON_AddStringToObject(move, "way", tforge_forge_way_name(l->moves[m].way));
        cJSON_AddItemToArray(moves, move);
    }
    return moves;
}

cJSON *tforge_report_labels(const tforge_forge *forge, const tforge_forge_profile *p,
                            const tforge_space *space)
{
    cJSON *labels = cJSON_CreateArray();
    for (size_t k = 0; labels && p && k < p->n_labels; k++) {
        const tforge_forge_label *l = &p->labels[k];
        cJSON *label = cJSON_CreateObject();
        cJSON_AddStringToObject(label, "label", l->label);
        cJSON_AddNumberToObject(label, "confidence", l->confidence);
        cJSON_AddStringToObject(label, "evidence", l->evidence);
        cJSON_AddStringToObject(label, "rule", l->rule);
        if (space)
            cJSON_AddItemToObject(label, "moves", moves_of(forge, l, space));
        cJSON_AddItemToArray(labels, label);
    }
    return labels;
}
