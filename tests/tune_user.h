// tests/tune_user.h: an HVM4G_USER_H (src/core/tune.h) for tests/run.sh's
// build phase. It overrides every tunable and turns the diagnostics on, so
// that the builds that change them still compile.
#define NARROW_BUDGET 128u
#define LANE_TPB      64
#define K_STEP_BLOCKS 8
#define WAIT_NS       128
#define PIECES        4u
#define PIECE_MIN     (4ull << 20)
#define LANE_BALANCE  1
#define LANE_CLOCK    1
