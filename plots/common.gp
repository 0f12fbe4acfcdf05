# Shared set-up of parosim's plot scripts: terminal from the output's extension, size,
# fonts and the colour cycle. Each script loads it from its own folder.
# Variables (set with gnuplot -e "name='value'"): output (required: .png or .svg),
# width and height in pixels (default 1000 x 600), title (optional).
if (!exists("output")) { print "set output='FILE.png' (or .svg) with gnuplot -e"; exit status 2 }
if (!exists("width")) width = 1000
if (!exists("height")) height = 600
if (!exists("title")) title = ''
# hover=1: gnuplot's mousing script inline in the SVG (coordinates and hypertext on hover),
# so that it needs no other file (the HTML report embeds it)
if (!exists("hover")) hover = 0
if (output[strlen(output)-3:] eq '.svg') {
    if (hover) {
        set terminal svg size width,height dynamic mouse standalone enhanced font 'DejaVu Sans,11' background rgb 'white'
    } else {
        set terminal svg size width,height dynamic enhanced font 'DejaVu Sans,11' background rgb 'white'
    }
} else {
    set terminal pngcairo size width,height enhanced font 'DejaVu Sans,10' background rgb 'white'
}
set output output
set datafile columnheaders
set border lw 1 lc rgb '#444444'
set grid ytics lc rgb '#dddddd' lt 1
set key noautotitle
if (strlen(title) > 0) set title title font ',13'
# Paul Tol's "bright" and "muted" schemes: distinct in colour and for colour-blind readers;
# the light grey last, so that a seventh series (MiCS in a scaling plot) is not drawn faint.
palette_colours = '#4477AA #EE6677 #228833 #CCBB44 #66CCEE #AA3377 #332288 #88CCEE #44AA99 #117733 #999933 #DDCC77 #CC6677 #882255 #AA4499 #BBBBBB'
colour(i) = word(palette_colours, (int(i) % words(palette_colours)) + 1)
# filled circle, square, triangles, diamond, then hollow ones: lines that coincide stay visible
point_type(i) = int(word('7 5 9 11 13 6 4 8 10 12', (int(i) % 10) + 1))
