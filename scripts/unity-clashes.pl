#!/usr/bin/env perl
# Reads lib/ sources (paths on stdin) and prints each free function that one unity batch could
# see twice (the image and the Windows build compile in unity batches, whose make-up shifts as
# files come and go): defined in two .cpp files of one module with the same name and parameter types, or
# in a .cpp with the name and parameter types of an inline function of a header. Files for
# different platforms (posix/openssl against win32/bcrypt) are never compiled together.
use strict;
my (%in_module, %in_header);
sub types {
  join ',', map { s/\s*=.*//; s/^\s+|\s+$//g; s/\s*\b[a-z_]\w*$//; s/^(?:const\s+)?(?:\w+::)*//; s/\s//g; $_ }
    split /,/, $_[0];
}
sub platform { $_[0] =~ /win32|bcrypt/ ? 'windows' : $_[0] =~ /posix|openssl/ ? 'posix' : '' }
while (my $file = <STDIN>) {
  chomp $file;
  my ($module) = $file =~ m{^((?:lib|tests)/[^/]+)/} or next;
  next if $module eq 'tests/fuzz';  # a program per file
  my $header = $file =~ /\.hpp$/;
  open my $in, '<', $file or die "$file: $!";
  while (my $line = <$in>) {
    my ($specifiers, $name, $params) = $line =~
      /^((?:inline |static |constexpr |\[\[[^\]]*\]\] )*)[A-Za-z_][\w:<>,]*[ *&]+([a-z_]\w*)\(([^()]*)\)(?: const)?\s*(?:\{|noexcept)/
      or next;
    my $key = "$name(" . types($params) . ")";
    if (!$header) { push @{$in_module{"$module $key"}}, $file }
    elsif ($specifiers =~ /inline|constexpr/) { push @{$in_header{$key}}, $file }
  }
}
for my $at (sort keys %in_module) {
  my $key = $at =~ s/^\S+ //r;
  my @files = @{$in_module{$at}};
  my @clash;
  for my $i (0 .. $#files) {
    for my $j ($i + 1 .. $#files) {
      my ($a, $b) = (platform($files[$i]), platform($files[$j]));
      push @clash, $files[$i], $files[$j] if !$a || !$b || $a eq $b;
    }
  }
  push @clash, @files, @{$in_header{$key}} if $in_header{$key};
  my %unique = map { $_ => 1 } @clash;
  print "$key: ", join(' ', sort keys %unique), "\n" if %unique;
}
