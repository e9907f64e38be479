/* A profile's labels as JSON: the one writer for result.json's "profile" and for
 * `tforge profile --json`. */
#ifndef TFORGE_ENGINE_REPORT_LABELS_H
#define TFORGE_ENGINE_REPORT_LABELS_H

#include "forge.h"

struct cJSON;

/* The labels of `p` (NULL: none), strongest first, as a new JSON array, or NULL when out of
 * memory: each {label, confidence, evidence, rule} and, given the `space` the forge was opened
 * on (NULL: left out), "moves": the dimensions that label's prior alone moves at the incumbent,
 * each {dimension, family, way}. */
struct cJSON *tforge_report_labels(const tforge_forge *forge, const tforge_forge_profile *p,
                                   const tforge_space *space);

#endif
