/* test_symmetric.c - placeholder. */
#include <criterion/criterion.h>
