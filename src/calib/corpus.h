/* SPDX-License-Identifier: MIT */
/* The measurement corpus (validation/nccl-corpus): its index, corpus.yaml (`kind:
 * nccl-corpus`, one entry per log: file, class, topology, algorithm, and provenance fields
 * kept for people), and the prediction of every log from its datasheet topology, summed up
 * per machine class and size band. A class's figures are what a CI test holds the model
 * to (tests/corpus.sh against validation/nccl-corpus/recorded.tsv). */
#pragma once

#include "calib/calib-nccl.h"
#include "calib/calib-predict.h"

G_BEGIN_DECLS

typedef struct {
    char *file;     /* relative to the corpus folder */
    char *klass;    /* machine class */
    char *topology; /* relative to the repository root (the corpus folder's grandparent) */
    gboolean ring_forced;
} ParoCorpusEntry;

typedef struct {
    char *folder;    /* as given, without "." parts and repeated or trailing separators */
    char *root;      /* the repository root topologies are relative to: folder's grandparent */
    GArray *entries; /* ParoCorpusEntry, in file order */
} ParoCorpus;

void paro_corpus_free(ParoCorpus *corpus);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoCorpus, paro_corpus_free)

/**
 * paro_corpus_load:
 * Reads @folder/corpus.yaml. @folder may be written as a shell completes it ("DIR/",
 * "DIR//", "./DIR"): the topologies are found two folders above it all the same. Errors:
 * located PARO_CONFIG_ERROR (an entry without file, class or topology).
 */
ParoCorpus *paro_corpus_load(const char *folder, GError **error);

/**
 * paro_corpus_inputs:
 * Returns: (transfer full): the files a prediction of @corpus reads, NULL-terminated and
 * each once: the index, every log and every topology. An output (--record) is written
 * through paro_file_write with them, so that it never replaces what it was computed from.
 */
GStrv paro_corpus_inputs(const ParoCorpus *corpus);

/* How a log is predicted. */
typedef enum {
    PARO_PREDICT_NCCL, /* NCCL's model (coll/nccl.c), with the log's NCCL_ALGO if forced */
    PARO_PREDICT_FLOW, /* the link-level ring simulation (coll/simulate.c), as before #14 */
} ParoPredictModel;
extern const char *const paro_predict_model_names[]; /* "nccl", "flow", NULL */

typedef struct {
    const ParoCorpusEntry *entry;
    GArray *rows; /* ParoPredictRow */
    ParoBandError bands[PARO_N_BANDS];
} ParoCorpusResult;

/**
 * paro_corpus_predict:
 * Returns: (transfer full) (nullable): a ParoCorpusResult per entry, in order. Errors: a
 * log or topology that does not load.
 */
GArray *paro_corpus_predict(const ParoCorpus *corpus, ParoPredictModel model, GError **error);
void paro_corpus_results_free(GArray *results);

/* A class's recorded figures in one size band: a line of the file --record writes and
 * --check reads ("class<TAB>band<TAB>median<TAB>worst", '#' comments). */
typedef struct {
    char *klass;
    int band;      /* ParoSizeBand */
    double median; /* |error|, a fraction */
    double worst;
    int line; /* 1-based, in the file */
} ParoCorpusRecord;

/**
 * paro_corpus_record_load:
 * Returns: (transfer full) (nullable): the ParoCorpusRecord lines of @path (freed with
 * g_array_unref). Errors: G_FILE_ERROR when it cannot be read; located PARO_CONFIG_ERROR:
 * _SYNTAX (a line of other than four tab-separated fields, an empty class, a file with no
 * line: a record of nothing passes every check), _REFERENCE (an unknown band), _TYPE (a
 * figure that is not a finite number: a recorded nan never regresses), _RANGE (a figure
 * outside paro_limit_relative_error), _DUPLICATE_KEY (a class and band recorded twice).
 */
GArray *paro_corpus_record_load(const char *path, GError **error);

/** paro_corpus_class_errors: the band errors of every row of @klass's logs together. */
void paro_corpus_class_errors(const GArray *results, const char *klass,
                              ParoBandError out[PARO_N_BANDS]);

/* Calibrating NCCL's model on a class's AllReduce logs and predicting its other ops. */
typedef struct {
    const char *klass;                  /* borrowed from the corpus */
    int op;                             /* ParoCollKind of the logs predicted */
    ParoBandError before[PARO_N_BANDS]; /* from the datasheet topology */
    ParoBandError after[PARO_N_BANDS];  /* with the scales fitted on the AllReduce logs */
    ParoNcclScale scales[PARO_NCCL_N_CLASSES];
} ParoCorpusTransfer;

/**
 * paro_corpus_transfer:
 * For every class with AllReduce logs: NCCL's model calibrated on them (paro_calib_fit_nccl
 * on the class's topology), and each other op's logs of the class on that topology
 * predicted before and after. Returns: (transfer full) (nullable): ParoCorpusTransfer rows
 * (freed with g_array_unref), by class in corpus order, then op. Errors: a log or topology
 * that does not load, a class with nothing to fit.
 */
GArray *paro_corpus_transfer(const ParoCorpus *corpus, GError **error);
void paro_corpus_transfer_clear(gpointer row);

/** paro_calib_predict_log_flow: as paro_calib_predict_log with the ring simulation on the
 * folded graph of @topology (the model of `parosim collective --algo ring`). */
GArray *paro_calib_predict_log_flow(const ParoCalibLog *log, const ParoTopology *topology,
                                    GError **error);

G_END_DECLS
