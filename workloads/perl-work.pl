# The perl workload (perl.yaml): perl-work.pl SCALE ID. Hashes of short strings grown by
# appending, split and join, sorts and regular expressions: many short-lived small objects and
# strings that grow (realloc). Prints ID and a checksum that depends on SCALE only.
use strict;
use warnings;
my ($scale, $id) = @ARGV;
my %h;
my $n = 2500 * $scale;
for my $i (1 .. $n) {
    my $k = 'key' . ($i * 7919 % 10007);
    $h{$k} .= "v$i,";
}
my $sum = 0;
for my $k (sort keys %h) {
    my @parts = split /,/, $h{$k};
    my $joined = join '-', reverse @parts;
    $sum += scalar(@parts) + length($joined);
    $sum += 1 while $joined =~ /v\d*7-/g;
}
my @words = map { sprintf('%05d', $_ * 31 % 99991) } 1 .. $n / 2;
$sum += length(join '', sort @words);
print "$id $sum\n";
