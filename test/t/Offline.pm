# Offline recomputation for the TAP tests: how many rows two queries do not
# share (their symmetric difference as multisets), so that a pipeline's
# results can be asserted equal to the same windows computed with plain SQL
# over the committed rows.
package Offline;

use strict;
use warnings;
use Exporter 'import';

our @EXPORT_OK = qw(differences);

sub differences
{
	my ($node, $db, $results, $offline) = @_;
	return $node->safe_psql($db, qq{
WITH r AS ($results), o AS ($offline)
SELECT count(*) FROM ((TABLE r EXCEPT ALL TABLE o) UNION ALL (TABLE o EXCEPT ALL TABLE r)) d});
}

1;
