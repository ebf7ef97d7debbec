/* check.c - placeholder until the validator lands (see check.h). */
#include "coll/check.h"
