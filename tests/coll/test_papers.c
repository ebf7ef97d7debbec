/* test_papers.c - placeholder. */
#include <criterion/criterion.h>
