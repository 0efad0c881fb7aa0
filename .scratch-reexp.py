import re,os,sys,importlib.util
spec=importlib.util.spec_from_file_location('mv','.scratch-move.py'); mv=importlib.util.module_from_spec(spec); spec.loader.exec_module(mv)
targets=sys.argv[1:]
for f in targets:
  s=open(f).read()
  for m in list(re.finditer(r'^export (type )?\{([^}]*)\} from "(\./[^"]+)";\n',s,re.M)):
    names=[n.strip() for n in m.group(2).split(',') if n.strip()]
    bare=[re.sub(r'^type\s+','',n) for n in names]
    dst=mv.resolve(os.path.abspath(f),m.group(3))
    print(f,'->',os.path.relpath(dst),bare)
    mv.repoint(f,os.path.relpath(dst),bare)
  s=open(f).read()
  s=re.sub(r'^export (type )?\{([^}]*)\} from "(\./[^"]+)";\n','',s,flags=re.M)
  open(f,'w').write(s)
