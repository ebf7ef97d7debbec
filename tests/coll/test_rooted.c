/* test_rooted.c - placeholder. */
#include <criterion/criterion.h>
