// Test only: the block kernels with sm_75 arithmetic (fp16 m16n8k16 as two m16n8k8) built for every target,
// so the path Turing GPUs take can be tested on newer ones (the tests' kernel name "k8").
#define MAXSIM4J_FORCE_SPLIT_K
#include "forward/maxsim_forward_mma.cu"
