// Function constant indices and tile sizes shared by the
// metal-flash-attention-style kernels and their host code.
#pragma once

#define MFA_FC_R     0
#define MFA_FC_C     1
#define MFA_FC_D     2
#define MFA_FC_SCALE 10

// the tile of keys each simdgroup stages in threadgroup memory
#define MFA_BLOCK_C 32
#define MFA_MAX_D 128
