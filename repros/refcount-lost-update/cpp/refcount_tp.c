/* The LTTng-UST tracepoint provider's probes, compiled once. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "refcount_tp.h"
