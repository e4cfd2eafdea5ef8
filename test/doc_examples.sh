#!/usr/bin/env bash
# Checks that every SQL example of the docs is executed by the test suite:
# each ```sql block of README.md, doc/*.md and src/README.md must appear,
# verbatim, in a test under sql/ (the pg_regress tests sql/doc_*.sql hold
# the docs' examples) or test/t/ (a TAP test, for what needs a server set
# up otherwise, such as pg_cron), so that a pasted example always works.  Prints
# "N passed, N failed" and fails if any block is missing.  Needs no server.
#
#   test/doc_examples.sh
set -uo pipefail
cd "$(dirname "$0")/.."

perl -e '
	use strict;
	my ($sql, $passed, $failed) = ("", 0, 0);
	for my $f (glob("sql/*.sql test/t/*.pl")) {
		open(my $fh, "<", $f) or die "$f: $!";
		local $/;
		$sql .= "\n" . <$fh> . "\n";
	}
	for my $doc (@ARGV) {
		next unless -f $doc;
		open(my $fh, "<", $doc) or die "$doc: $!";
		my ($line, $start, $block) = (0, 0, undef);
		while (my $l = <$fh>) {
			$line++;
			if (!defined $block && $l =~ /^```sql\s*$/) {
				($block, $start) = ("", $line);
			} elsif (defined $block && $l =~ /^```\s*$/) {
				if (index($sql, "\n" . $block) >= 0) {
					$passed++;
				} else {
					$failed++;
					print "FAIL $doc:$start: this example is in no test under sql/ or test/t/\n";
				}
				undef $block;
			} elsif (defined $block) {
				$block .= $l;
			}
		}
		if (defined $block) {
			$failed++;
			print "FAIL $doc:$start: unterminated ```sql block\n";
		}
	}
	print "$passed passed, $failed failed\n";
	exit($failed ? 1 : 0);
' README.md doc/*.md src/README.md
