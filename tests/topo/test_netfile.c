#include <criterion/criterion.h>
Test(netfile, stub) { cr_assert(1); }
