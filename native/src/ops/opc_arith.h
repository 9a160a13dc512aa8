/*
 * opc_arith.h - the integer arithmetic of the generated phase-1 checks
 * (ascend_aclnn/ops/rules.py; tests/test_rules_arith.py holds it to the Python side).
 * Self-contained, so that test can compile it alone.
 */
#ifndef ACLSIM_OPC_ARITH_H
#define ACLSIM_OPC_ARITH_H

/* __int128, exact within +-2**125 and
 * saturated beyond, as the Python side computes it; a zero divisor gives 0. Floor
 * division and its remainder are Python's, trunc ones C's. */
#define OPC_SAT (((__int128)1) << 125)
static inline __int128 opc_sat(__int128 v) { return v > OPC_SAT ? OPC_SAT : v < -OPC_SAT ? -OPC_SAT : v; }
static inline __int128 opc_mul_sat(__int128 a, __int128 b)
{
    __int128 r;
    if (__builtin_mul_overflow(a, b, &r)) return (a < 0) == (b < 0) ? OPC_SAT : -OPC_SAT;
    return opc_sat(r);
}
static inline __int128 opc_truncdiv(__int128 a, __int128 b) { return b ? a / b : 0; }
static inline __int128 opc_truncmod(__int128 a, __int128 b) { return b ? a % b : 0; }
static inline __int128 opc_floordiv(__int128 a, __int128 b)
{
    if (!b) return 0;
    __int128 q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline __int128 opc_floormod(__int128 a, __int128 b)
{
    if (!b) return 0;
    __int128 r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

#endif /* ACLSIM_OPC_ARITH_H */
