#include "cli.h"

int main(int argc, char **argv)
{
    return tforge_cli_main(argc, argv);
}
