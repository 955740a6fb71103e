out/a.bin: assets/a.lvl \
  assets/tiles/one\ two.png $$(x) \
  /etc/hostname
assets/b.png:
