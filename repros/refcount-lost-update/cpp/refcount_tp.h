// LTTng-UST tracepoint provider: one event per counter operation, the ETW manifest's events in LTTng's form.
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER refcount

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./refcount_tp.h"

#if !defined(REFCOUNT_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define REFCOUNT_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(
    refcount, counter,
    LTTNG_UST_TP_ARGS(unsigned int, op, unsigned long, obj, unsigned int, tid, long, seen, long, wrote),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(unsigned int, op, op)
        lttng_ust_field_integer_hex(unsigned long, obj, obj)
        lttng_ust_field_integer(unsigned int, tid, tid)
        lttng_ust_field_integer(long, seen, seen)
        lttng_ust_field_integer(long, wrote, wrote)))

#endif

#include <lttng/tracepoint-event.h>
