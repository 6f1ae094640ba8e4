// rules.h: ids of the interactions, for -D. Portable (no strings): the core
// built with WNF_RULES (cpu/step.c) records the id of the last interaction
// it ran in Wnf.rule; step.c names it (rule_name). Where the rule depends on the value met, the core
// stores a group plus the value's tag, decoded on the host, so each site
// costs one store.

#ifndef HVM4G_RULES_H
#define HVM4G_RULES_H

#define R_NONE            0
#define R_APP_LAM         1
#define R_APP_SUP         2
#define R_APP_ERA         3
#define R_APP_INC         4
#define R_APP_MAT_SUP     5
#define R_MAT_INC         6
#define R_USE_VAL         7
#define R_USE_SUP         8
#define R_USE_ERA         9
#define R_USE_INC         10
#define R_APP_MAT_CTR_MAT 11
#define R_APP_MAT_CTR_MIS 12
#define R_APP_MAT_NUM_MAT 13
#define R_APP_MAT_NUM_MIS 14
#define R_DUP_SUP         15
#define R_OP2_NUM_NUM     16
#define R_OP2_SUP         17
#define R_OP2_ERA         18
#define R_OP2_INC_X       19
#define R_OP2_NUM_SUP     20
#define R_OP2_NUM_ERA     21
#define R_OP2_INC_Y       22
#define R_EQL_ERA_L       23
#define R_EQL_ANY         24
#define R_EQL_SUP_L       25
#define R_EQL_INC_L       26
#define R_EQL_ERA_R       27
#define R_EQL_SUP_R       28
#define R_EQL_INC_R       29
#define R_AND_ZER         30
#define R_AND_ONE         31
#define R_OR_ZER          32
#define R_OR_ONE          33
#define R_AND_ERA         34
#define R_OR_ERA          35
#define R_AND_SUP         36
#define R_OR_SUP          37
#define R_AND_INC         38
#define R_OR_INC          39
#define R_DSU_NUM         40
#define R_DDU_NUM         41
#define R_DSU_SUP         42
#define R_DDU_SUP         43
#define R_DSU_ERA         44
#define R_DDU_ERA         45
#define R_DSU_INC         46
#define R_DDU_INC         47
#define R_APP_RED_ERA     48
#define R_APP_RED_SUP     49
#define R_APP_RED_INC     50
#define R_APP_RED_LAM     51
#define R_APP_RED_RED     52
#define R_APP_RED_NAM     53
#define R_APP_RED_DRY     54
#define R_APP_RED_CTR     55
#define R_APP_RED_MAT_ERA 56
#define R_APP_RED_MAT_SUP 57
#define R_APP_RED_MAT_INC 58
#define R_APP_RED_MAT_CTR_MAT 59
#define R_APP_RED_MAT_CTR_MIS 60
#define R_APP_RED_MAT_NUM_MAT 61
#define R_APP_RED_MAT_NUM_MIS 62
#define R_APP_RED_USE_ERA 63
#define R_APP_RED_USE_SUP 64
#define R_APP_RED_USE_INC 65
#define R_APP_RED_USE_VAL 66
#define R_WNF_UNS         67
#define R_FIXED           68   // ids below this are names of their own

// Groups: group + tag of the value (DUP-*), or + (tag a << 7 | tag b) (EQL).
#define R_DUP             0x100
#define R_EQL             0x4000

#endif
