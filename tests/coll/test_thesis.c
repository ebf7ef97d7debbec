/* test_thesis.c - placeholder. */
#include <criterion/criterion.h>
