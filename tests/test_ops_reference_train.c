/* The train reference cases (ops_reference_train_cases.c) on the CPU backend. */
#include "op_reference.h"

int main(void) { return op_reference_main(&op_reference_train); }
