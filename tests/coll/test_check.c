/* test_check.c - placeholder. */
#include <criterion/criterion.h>
