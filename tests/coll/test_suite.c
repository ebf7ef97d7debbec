/* test_suite.c - placeholder. */
#include <criterion/criterion.h>
